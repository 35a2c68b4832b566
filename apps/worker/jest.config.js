module.exports = {
  displayName: 'worker',
  preset: '../../jest.preset.js',
  rootDir: __dirname,
};
