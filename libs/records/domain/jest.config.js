module.exports = {
  displayName: 'records-domain',
  preset: '../../../jest.preset.js',
  rootDir: __dirname,
};
