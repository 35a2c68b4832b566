module.exports = {
  displayName: 'shared-redis',
  preset: '../../../jest.preset.js',
  rootDir: __dirname,
};
